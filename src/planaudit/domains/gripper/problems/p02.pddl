;; Two balls, one trip: both grippers should be used at once.
(define (problem gripper-p02)
  (:domain gripper)
  (:objects
    rooma roomb - room
    ball1 ball2 - ball
    left right - gripper)
  (:init
    (at-robby rooma)
    (free left)
    (free right)
    (at ball1 rooma)
    (at ball2 rooma)
    (= (total-cost) 0))
  (:goal (and
    (at ball1 roomb)
    (at ball2 roomb)))
  (:metric minimize (total-cost)))
