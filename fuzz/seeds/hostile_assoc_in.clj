(count (update-in (assoc-in {} (repeat 100000 :a) 1) (repeat 100000 :a) inc))
