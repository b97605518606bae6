"""Workshop plans that fit their slot: what the room does, by when, and what to cut when it is behind.

Each slot (two hours, half a day, a day, two days) has a fixed frame: an opening, breaks, a closing. The work
between them is the course's stretches (authoring/time_model.py) in course order, as many as fit; the
rest is homework. Because every notebook imports the course's own version of what earlier ones built,
a room can stop after any exercise and a learner can start the homework anywhere.

The plans are generated into docs/WORKSHOP.md by authoring/workshop_guide.py, so they follow every edit
of a notebook, and tests/test_workshop_guide.py holds each one to its slot.
"""

from __future__ import annotations

from dataclasses import dataclass

from looplab.course import COURSE, Course

from .time_model import Stretch, course_stretches


@dataclass(frozen=True)
class Pause:
    what: str  # its words' key in authoring/texts/workshop_guide.toml ("break", "lunch", "opening"...)
    minutes: int
    at: int | None = None  # a break: where it should fall, in minutes from the start (at the nearest stretch's end)


@dataclass(frozen=True)
class Slot:
    name: str  # its words' key in authoring/texts/workshop_guide.toml ("two_hours"...): the guide says it in its language
    minutes: int
    opening: Pause
    closing: Pause
    breaks: tuple[Pause, ...]

    @property
    def work_minutes(self) -> int:
        return self.minutes - self.opening.minutes - self.closing.minutes - sum(b.minutes for b in self.breaks)


OPENING = "opening"  # the loop itself, on the projector (notebook 1's first section)
CLOSING = "closing"  # what is homework, how to hand in
SLOTS = (
    Slot("two_hours", 120, Pause(OPENING, 5), Pause(CLOSING, 5),
         (Pause("break", 10, at=60),)),
    Slot("half_day", 210, Pause(OPENING, 10), Pause(CLOSING, 10),
         (Pause("break", 15, at=105),)),
    Slot("day", 480, Pause(OPENING, 10), Pause(CLOSING, 15),
         (Pause("break", 15, at=90), Pause("lunch", 60, at=210), Pause("break", 15, at=360))),
    # Notebooks 7 on do not fit a day: two, the second opening with a recap. The clock goes on counting the day's
    # minutes, so day 2's 9:00 reads 8:00 (its words say so).
    Slot("two_days", 960, Pause(OPENING, 10), Pause(CLOSING, 15),
         (Pause("break", 15, at=90), Pause("lunch", 60, at=210), Pause("break", 15, at=360),
          Pause("day_two", 15, at=465), Pause("break", 15, at=570), Pause("lunch", 60, at=690),
          Pause("break", 15, at=840))),
)


@dataclass(frozen=True)
class Step:
    start: int  # minutes from the start of the workshop
    minutes: int
    stretch: Stretch | None = None
    pause: Pause | None = None

    @property
    def end(self) -> int:
        return self.start + self.minutes


@dataclass(frozen=True)
class Plan:
    slot: Slot
    steps: tuple[Step, ...]
    homework: tuple[Stretch, ...]

    @property
    def minutes(self) -> int:
        return self.steps[-1].end if self.steps else 0

    @property
    def in_the_room(self) -> list[Stretch]:
        return [step.stretch for step in self.steps if step.stretch is not None]

    def cut_list(self) -> list[Stretch]:
        """What to move to homework first when the room is behind: the ungraded tails, then the
        exercises from the last one back (the earlier ones are what the later ones build on)."""
        done = self.in_the_room
        return [s for s in reversed(done) if not s.graded] + [s for s in reversed(done) if s.graded]


def fitting(stretches: list[Stretch], budget: int) -> tuple[list[Stretch], list[Stretch]]:
    """The longest run of stretches, in course order, that fits the budget; and the rest."""
    taken, used = [], 0
    for stretch in stretches:
        if used + stretch.minutes > budget:
            break
        taken.append(stretch)
        used += stretch.minutes
    return taken, stretches[len(taken):]


def plan(slot: Slot, course: Course = COURSE) -> Plan:
    work, homework = fitting(course_stretches(course), slot.work_minutes)
    steps = [Step(0, slot.opening.minutes, pause=slot.opening)]
    breaks = list(slot.breaks)
    clock = slot.opening.minutes
    for index, stretch in enumerate(work):
        steps.append(Step(clock, stretch.minutes, stretch=stretch))
        clock += stretch.minutes
        following = work[index + 1].minutes if index + 1 < len(work) else 0
        # A break falls after this stretch if that is nearer its time than after the next one.
        while breaks and abs(clock - breaks[0].at) <= abs(clock + following - breaks[0].at):
            pause = breaks.pop(0)
            steps.append(Step(clock, pause.minutes, pause=pause))
            clock += pause.minutes
    for pause in breaks:  # a slot with little work left: its remaining breaks come before the closing
        steps.append(Step(clock, pause.minutes, pause=pause))
        clock += pause.minutes
    steps.append(Step(clock, slot.closing.minutes, pause=slot.closing))
    return Plan(slot, tuple(steps), tuple(homework))


def plans(course: Course = COURSE) -> list[Plan]:
    return [plan(slot, course) for slot in SLOTS]


def clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"
