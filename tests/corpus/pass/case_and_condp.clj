;; => [:small :medium :large :unknown "two" "many"]
(defn size [n]
  (condp > n
    10 :small
    100 :medium
    1000 :large
    :unknown))
(defn word [n] (case n 1 "one" 2 "two" "many"))
(conj (mapv size [5 50 500 5000]) (word 2) (word 7))
