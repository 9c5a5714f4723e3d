;; error: Nested `#(...)` is not allowed
(map #(map #(inc %) %) [[1]])
