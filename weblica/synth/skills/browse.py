from weblica.synth.skills.common import skill  # noqa: F401
