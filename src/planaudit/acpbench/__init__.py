"""ACPBench material: its generative questions answered by proof from their PDDL
(`planaudit acpbench gold`), compared with the answers the files record."""
