"""A person's decision on a proposal: proposing and revising it, who may approve it now, approving
it (the last approval makes its one action), and the digest in words."""
