;; error: Unknown tool `tool/search`
(tool/search {:q "x"})
