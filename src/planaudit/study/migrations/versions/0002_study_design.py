"""A study's design kept with it (arms, instances, suggestions, consent text's hash, ...),
so that a server refuses to go on with a changed design once people have enrolled.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("studies") as batch:
        batch.add_column(sa.Column("design", sa.Text))  # JSON; null: opened before 0002


def downgrade() -> None:
    with op.batch_alter_table("studies") as batch:
        batch.drop_column("design")
