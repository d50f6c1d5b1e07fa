"""The merchant's own HTTPS endpoint as a provider: Caseward asks it for facts, sends it
approved actions under their idempotency keys and looks their outcome up, every request
signed (Standard Webhooks, with key rotation). :mod:`.protocol` is the wire,
:mod:`.signing` the signatures, :mod:`.adapter` the provider contract on top of both,
:mod:`.sandbox` a receiving server for tests."""
