"""What a session taught and where it goes: the occasion, reflection, attribution and its
counterfactual check, consolidation with what is known, review of outside content, disputes,
import splitting and archiving."""
