"""What a model sees: each row's input, causal-LM prompts and verbalisers, few-shot pools."""
