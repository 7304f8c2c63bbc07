"""microarena host tools: offline planner, host runtime, emulation runner and serial recorder."""
