"""Knowledge that flows in or is compiled: feeds, skills, documents and LLM fact extraction.
May import kenning.curation, kenning.memory, kenning.llm and the wings below them.
"""
