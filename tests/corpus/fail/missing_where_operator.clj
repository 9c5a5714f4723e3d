;; error: `where` is missing its operator
(filter (where :status "active") [{:status "active"}])
