(count (group-by identity (range 1000000)))
