"""Phase-1 texts coded by hand (`/admin/coding`): one row per coding a coder gives, the
steps they read or their verdict, with its time; a recoding is a new row (the last one
counts), so the history of every coder's codes is kept.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-08
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "codings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("study", sa.String(64), sa.ForeignKey("studies.name"), nullable=False),
        sa.Column("pseudonym", sa.String(64), nullable=False),
        sa.Column("coder", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_codings_study", "codings", ["study"])


def downgrade() -> None:
    op.drop_index("ix_codings_study", "codings")
    op.drop_table("codings")
