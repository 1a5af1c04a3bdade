;; Three rooms, robot starts in the empty rooma; ball1 (roomc) and
;; ball2 (roomb) swap rooms.  A drop in one room is followed by a
;; pick in the same room, so no trip is wasted.
(define (problem gripper-p03)
  (:domain gripper)
  (:objects
    rooma roomb roomc - room
    ball1 ball2 - ball
    left right - gripper)
  (:init
    (at-robby rooma)
    (free left)
    (free right)
    (at ball1 roomc)
    (at ball2 roomb)
    (= (total-cost) 0))
  (:goal (and
    (at ball1 roomb)
    (at ball2 roomc)))
  (:metric minimize (total-cost)))
