;; => {:count 4, :by-initial {"a" ["ada" "alan"], "g" ["grace"], "l" ["linus"]}, :lengths {3 1, 5 2, 4 1}}
(def names ["ada" "grace" "alan" "linus"])
{:count (reduce (fn [n _] (inc n)) 0 names)
 :by-initial (reduce (fn [m s] (update m (subs s 0 1) (fnil conj []) s)) {} names)
 :lengths (frequencies (map count names))}
