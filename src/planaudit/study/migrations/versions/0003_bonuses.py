"""The bonuses paid (`planaudit study bonus`): one row per participant, never two, with the
amount, its currency, the phase-2 plan's verdict and the batch (one run's file) it was
paid in. The platform id stays in `ledger`; a batch's file is rebuilt from the two.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bonuses",
        sa.Column("participant_id", sa.String(32), sa.ForeignKey("participants.id"), primary_key=True),
        sa.Column("study", sa.String(64), nullable=False),
        sa.Column("amount", sa.Numeric(10, 2), nullable=False),
        sa.Column("currency", sa.String(16), nullable=False),
        sa.Column("valid", sa.Boolean, nullable=False),
        sa.Column("batch", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_bonuses_batch", "bonuses", ["batch"])


def downgrade() -> None:
    op.drop_index("ix_bonuses_batch", "bonuses")
    op.drop_table("bonuses")
