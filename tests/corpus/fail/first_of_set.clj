;; error: unordered
(first #{1 2 3})
