"""How many people each (arm, instance) of a study holds, kept as they enrol: assignment
reads these few rows by primary key inside the study's lock, where it counted every
participant of the study (a GROUP BY growing with the study) while every other entry
waited. Filled here from the participants already enrolled, so an existing study's
sequence goes on from where it was. A server of an earlier planaudit does not keep these
counts: stop it before a server of this one upgrades the database.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "allocation_counts",
        sa.Column("study", sa.String(64), sa.ForeignKey("studies.name"), primary_key=True),
        sa.Column("arm", sa.String(64), primary_key=True),
        sa.Column("instance", sa.String(128), primary_key=True),
        sa.Column("n", sa.Integer, nullable=False),
    )
    op.execute("INSERT INTO allocation_counts (study, arm, instance, n) "
               "SELECT study, arm, instance, count(*) FROM participants "
               "GROUP BY study, arm, instance")


def downgrade() -> None:
    op.drop_table("allocation_counts")
