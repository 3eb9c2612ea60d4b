"""What this build is, as every task and trace records it: the behaviour versions
(`versions`), the versioned JSON Schemas (`schemas`) and the source digest of the
scoring code (`identity`). Everything else depends on this package; it depends on
nothing else in the environment."""
