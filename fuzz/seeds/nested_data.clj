;; => {:verified ["a@x.com"], :countries #{"US" "SE"}}
(def users [{:email "a@x.com" :profile {:verified true :country "US"}}
            {:email "b@x.com" :profile {:verified false :country "SE"}}])
{:verified (->> users (filter (where [:profile :verified] = true)) (map :email))
 :countries (set (map #(get-in % [:profile :country]) users))}
