"""The starter questions an empty project chat suggests."""

from __future__ import annotations


def suggested_prompts(titles: list[str]) -> list[str]:
    """Three starter questions built from the project's paper titles (generic ones without papers)."""
    if not titles:
        return [
            "What are the main contributions of these papers?",
            "Which methods do these papers use, and how do they differ?",
            "What limitations do the authors acknowledge?",
        ]
    first = titles[0]
    if len(titles) == 1:
        return [
            f"What are the main contributions of “{first}”?",
            f"Which methods does “{first}” use, and how are they evaluated?",
            f"What limitations does “{first}” acknowledge?",
        ]
    return [
        f"Compare how “{first}” and “{titles[1]}” approach their main problem.",
        f"What are the main contributions of “{first}”?",
        "Where do these papers agree, and where do they disagree?",
    ]
