"""Reading engineers' text: phrases and whole words, polarity, values, dates, substance.
Pure functions; may import kenning.core only (and dateparser, which reads dates).
"""
