((reduce comp (repeat 30000 inc)) 0)
