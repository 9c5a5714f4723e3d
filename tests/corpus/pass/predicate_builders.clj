;; => [3 5]
(def orders [{:id 1 :total 50 :status "vip"}
             {:id 2 :total 150 :status "regular"}
             {:id 3 :total 200 :status "vip" :flagged false}
             {:id 4 :total 300 :status "premium" :flagged true}
             {:id 5 :total 120 :status :premium}])
(->> orders
     (filter (all-of (where :total > 100)
                     (any-of (where :status = "vip") (where :status = "premium"))
                     (none-of (where :flagged))))
     (mapv :id))
