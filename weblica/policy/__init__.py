"""Policies: prompting and context (`context`), coordinate conventions (`coords`), model backends
(`backends/`: hf, vllm, openai, anthropic) behind `factory.make_policy(spec, seed)`, the scripted `oracle`
and `random` policies, the tiny test checkpoint (`tiny`), the LLM judge and trajectory rewards.

Nothing heavy is imported here: torch and the provider SDKs load only when a backend needs them.
"""
