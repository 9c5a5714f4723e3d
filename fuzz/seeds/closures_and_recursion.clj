;; => {:fib 6765, :fact 2432902008176640000, :evens [0 2 4], :counter 3}
(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(defn fact [n] (loop [i n acc 1] (if (<= i 1) acc (recur (dec i) (* acc i)))))
(defn make-pred [k] (fn [x] (zero? (mod x k))))
(def even (make-pred 2))
{:fib (fib 20)
 :fact (fact 20)
 :evens (vec (filter even (range 6)))
 :counter (count (for [x [1 2 3]] x))}
