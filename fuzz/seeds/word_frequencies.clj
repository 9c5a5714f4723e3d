;; => [["the" 3] ["fox" 2] ["a" 1]]
(def text "the fox and the dog saw the fox a")
(->> (split text " ")
     (frequencies)
     (sort-by second >)
     (remove (fn [[w _]] (contains? #{"and" "dog" "saw"} w)))
     (take 3))
