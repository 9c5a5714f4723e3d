;; => [42 [2 3] 6]
;; A user definition shadows the builtin of the same name (specification
;; §5.13); `clojure.core/` still reaches the builtin.
(defn avg [xs] 42)
(def count 3)
[(avg [1 2]) (clojure.core/map inc [1 2]) (* 2 count)]
