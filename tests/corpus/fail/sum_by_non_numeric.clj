;; error: `sum-by` expected numeric field values, got string "10"
(sum-by :amount [{:amount "10"} {:amount 20}])
