;; Four rooms, six balls rotate one room onwards (a->b->c->d->a):
;; each drop should be combined with a pick in the same room.
(define (problem gripper-p06)
  (:domain gripper)
  (:objects
    rooma roomb roomc roomd - room
    ball1 ball2 ball3 ball4 ball5 ball6 - ball
    left right - gripper)
  (:init
    (at-robby rooma)
    (free left)
    (free right)
    (at ball1 rooma)
    (at ball2 rooma)
    (at ball3 roomb)
    (at ball4 roomc)
    (at ball5 roomc)
    (at ball6 roomd)
    (= (total-cost) 0))
  (:goal (and
    (at ball1 roomb)
    (at ball2 roomb)
    (at ball3 roomc)
    (at ball4 roomd)
    (at ball5 roomd)
    (at ball6 rooma)))
  (:metric minimize (total-cost)))
