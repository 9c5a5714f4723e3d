;; error: `recur` must be in tail position
(loop [i 0]
  (inc (recur (inc i))))
