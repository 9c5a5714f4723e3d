;; => {:errors 2, :slowest "checkout", :users #{"ann" "bo"}}
(def log "2026-01-02 INFO user=ann path=home ms=12
2026-01-02 ERROR user=bo path=checkout ms=950
2026-01-03 ERROR user=ann path=cart ms=300")
(def rows
  (for [line (split-lines log)
        :let [[_ level user path ms] (re-find #"\S+ (\w+) user=(\w+) path=(\w+) ms=(\d+)" line)]]
    {:level level :user user :path path :ms (parse-long ms)}))
{:errors (count (filter (where :level = "ERROR") rows))
 :slowest (:path (max-by :ms rows))
 :users (set (map :user rows))}
