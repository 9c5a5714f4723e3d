;; error: Cannot redefine the builtin `count`
(def count 3)
