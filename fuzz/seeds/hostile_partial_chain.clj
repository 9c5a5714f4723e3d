((reduce (fn [f _] (partial f)) inc (range 5000)) 0)
