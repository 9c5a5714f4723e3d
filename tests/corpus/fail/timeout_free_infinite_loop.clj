;; error: exceeded
;; An endless loop ends with a limit error (steps or time), not a hang.
(loop [i 0] (recur (inc i)))
