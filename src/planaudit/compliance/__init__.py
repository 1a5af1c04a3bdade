"""Plan compliance: the workflows prescribed to online agents (plan settings), the phase
labels of a trajectory, how well a phase sequence follows an expected order (PPC, POC,
PPF, PC) and the trajectory's graph. Reads trajectories; never runs an agent, never
imports litellm."""
