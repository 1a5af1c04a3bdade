"""Each participant's place in their stratum's allocation sequence (`study/allocation.py`:
seeded permuted blocks), so that the export can set every assignment beside the sequence
the seed gives. Null for people enrolled before assignment was randomised.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.add_column(sa.Column("allocation", sa.Integer))


def downgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.drop_column("allocation")
