;; error: parse-error
(defn f [x]
  (+ x 1)
