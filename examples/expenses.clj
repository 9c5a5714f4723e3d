;; Summarize approved expenses by category, flagging the large ones.
;; Run: cargo run --release -- run examples/expenses.clj --data examples/expenses.json

(defn large? [e] (> (:amount e) data/threshold))

(def approved (filter (where :approved) data/expenses))
(println "approved:" (count approved) "of" (count data/expenses))

{:by-category (->> approved
                   (group-by :category)
                   (map (fn [[cat items]] [cat (sum-by :amount items)]))
                   (sort-by second >)
                   (into {}))
 :large (->> approved (filter large?) (mapv :id))}
