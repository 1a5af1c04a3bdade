"""The offline regime: the output contract and the prompting strategies."""
