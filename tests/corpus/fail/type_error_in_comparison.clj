;; error: `>` expected a number, got nil
(> 5 nil)
