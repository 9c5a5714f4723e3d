;; => {:a 2, :b [1 2 3], :c "X-Y"}
(-> {:a 1}
    (update :a inc)
    (assoc :b (->> [3 1 2] sort vec))
    (assoc :c (as-> ["x" "y"] parts (map upper-case parts) (join "-" parts))))
