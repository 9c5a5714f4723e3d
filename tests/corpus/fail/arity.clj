;; error: arity-error at 3:1: `inc` expects 1 argument, got 2
(def x 1)
(inc x 2)
