;; => ["Alice" 30 "unknown" [2 3] {:name "Alice", :age 30}]
(let [person {:name "Alice" :age 30}
      {:keys [name age city] :or {city "unknown"} :as all} person
      [_ & more] [1 2 3]]
  [name age city more all])
