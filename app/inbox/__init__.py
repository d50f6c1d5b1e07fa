"""What people read: the queue of cases waiting for them, one case's whole file, and the one
reading of a proposal and an action every surface shows."""
