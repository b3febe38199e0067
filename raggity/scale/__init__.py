"""Scale-out parts that need the optional `raggity[scale]` extra (Ray, Lance's Ray integration)."""
