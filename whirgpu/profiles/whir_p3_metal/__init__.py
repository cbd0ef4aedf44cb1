"""The whir-p3-metal profile (the default): the Rust reference whir-p3-metal at commit ffe07b5, Plonky3 090b134a.

Its proof documents and formats (``whir-p3-json/v1`` and whirgpu's binary format). Its configuration, domain
separator and proof types are the base the shared step order in ``protocol`` is written against.
"""
