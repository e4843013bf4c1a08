"""ptec: ahead-of-time compiler from PyTorch to upstream-compatible .pte
programs for Cortex-M, and the tools around it."""
