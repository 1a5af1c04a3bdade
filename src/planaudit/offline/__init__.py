"""The offline regime: the prompting strategies and the episode that runs one."""
