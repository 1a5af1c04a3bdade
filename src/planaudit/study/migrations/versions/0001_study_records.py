"""The first schema of a study's records: studies, participants, the bonus ledger (the
only table with platform ids), answers and time-stamped events with idempotency keys.

Revision ID: 0001
Revises:
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("secret", sa.String(64), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "participants",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("study", sa.String(64), sa.ForeignKey("studies.name"), nullable=False),
        sa.Column("pseudonym", sa.String(64), nullable=False),
        sa.Column("arm", sa.String(64), nullable=False),
        sa.Column("instance", sa.String(128), nullable=False),
        sa.Column("step", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("consent_hash", sa.String(64)),
        sa.Column("consent_at", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("study", "pseudonym", name="one_participation"),
    )
    op.create_table(
        "ledger",
        sa.Column("participant_id", sa.String(32), sa.ForeignKey("participants.id"), primary_key=True),
        sa.Column("study", sa.String(64), nullable=False),
        sa.Column("platform_id", sa.String(128), nullable=False),
        sa.Column("platform_study", sa.String(128)),
        sa.Column("platform_session", sa.String(128)),
    )
    op.create_table(
        "answers",
        sa.Column("participant_id", sa.String(32), sa.ForeignKey("participants.id"), primary_key=True),
        sa.Column("page", sa.String(32), primary_key=True),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("participant_id", sa.String(32), sa.ForeignKey("participants.id"), nullable=False),
        sa.Column("page", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("data", sa.Text),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("idem", sa.String(64)),
        sa.UniqueConstraint("participant_id", "idem", name="one_post"),
    )
    op.create_index("ix_events_participant_id", "events", ["participant_id"])


def downgrade() -> None:
    op.drop_index("ix_events_participant_id", "events")
    for table in ("events", "answers", "ledger", "participants", "studies"):
        op.drop_table(table)
