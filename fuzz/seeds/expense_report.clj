;; => [{:category "food", :total 17.5} {:category "travel", :total 1200}]
(def expenses [{:category "travel" :amount 1000}
               {:category "food" :amount 12.5}
               {:category "travel" :amount 200}
               {:category "food" :amount 5}])
(let [by-category (group-by :category expenses)]
  (->> (keys by-category)
       (map (fn [cat] {:category cat :total (sum-by :amount (get by-category cat))}))
       (sort-by :category)))
